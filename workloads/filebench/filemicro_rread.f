# filemicro_rread: random reads of one large file until $bytes have been
# read.
#
#   $dir       where the file is created
#   $bytes     bytes read before the run ends
#   $filesize  bytes of the file (created before the run)
#   $iosize    bytes per read, at offsets aligned to it
#   $iters     reads per loop
#   $nthreads  reading threads
#
# The stock file is 1.4 syntax (cached=false, rejected by 1.5) and names the
# read "write-file". Here the read is read-file, the quit mode is firstdone
# so the byte limit ends the run, and the cold start cached=false asked for
# is left to fsbench's cache options.

set $dir=/tmp
set $bytes=128m
set $filesize=1g
set $iosize=2k
set $iters=1
set $nthreads=1

set mode quit firstdone

define file name=bigfile1,path=$dir,size=$filesize,prealloc,reuse

define process name=filereader,instances=1
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop read name=read-file,filename=bigfile1,random,iosize=$iosize,iters=$iters
    flowop finishonbytes name=finish,value=$bytes
  }
}
