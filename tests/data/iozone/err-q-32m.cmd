iozone -q 32m -f /dev/shm/iozone-samples/iozone.tmp
