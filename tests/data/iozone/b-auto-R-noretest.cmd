iozone -a -n 64k -g 1m -y 4k -q 64k -i 0 -i 1 -i 2 -R -+n -f /dev/shm/iozone-samples/iozone.tmp
