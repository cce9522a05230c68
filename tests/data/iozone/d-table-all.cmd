iozone -s 1m -r 64k -i 0 -i 1 -i 2 -i 3 -i 4 -i 5 -i 6 -i 7 -f /dev/shm/iozone-samples/iozone.tmp
