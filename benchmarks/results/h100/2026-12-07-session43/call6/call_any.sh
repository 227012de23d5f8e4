if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100; then
  echo "H100: tests first"; TESTS=500 bash scratch/call2.sh
else
  echo "H200: the A/B first"; bash scratch/call1.sh
fi
