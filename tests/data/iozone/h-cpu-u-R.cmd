iozone -+u -a -n 64k -g 256k -y 4k -q 64k -i 0 -i 1 -R -f /dev/shm/iozone-samples/iozone.tmp
