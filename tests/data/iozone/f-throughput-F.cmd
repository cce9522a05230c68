iozone -t 2 -s 1m -r 64k -i 0 -i 1 -F /dev/shm/iozone-samples/f1 /dev/shm/iozone-samples/f2
