iozone -a -n 64k -g 512k -y 4k -q 256k -i 0 -R -f /dev/shm/iozone-samples/iozone.tmp
