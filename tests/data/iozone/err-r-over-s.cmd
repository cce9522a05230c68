iozone -r 128k -s 64k -f /dev/shm/iozone-samples/iozone.tmp
