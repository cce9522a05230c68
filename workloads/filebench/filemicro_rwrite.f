# filemicro_rwrite: random overwrites of one large file until $bytes have
# been written.
#
#   $dir       where the file is created
#   $bytes     bytes written before the run ends
#   $filesize  bytes of the file (created before the run)
#   $iosize    bytes per write, at offsets aligned to it
#   $iters     writes per loop
#   $nthreads  writing threads
#   $sync      open the file with O_SYNC (true/false)
#
# The stock file is 1.4 syntax (cached=false); that attribute is dropped and
# the quit mode is firstdone so the byte limit ends the run.

set $dir=/tmp
set $bytes=128m
set $filesize=1g
set $iosize=2k
set $iters=1
set $nthreads=1
set $sync=false

set mode quit firstdone

define file name=bigfile1,path=$dir,size=$filesize,prealloc,reuse

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop write name=write-file,filename=bigfile1,random,dsync=$sync,iosize=$iosize,iters=$iters
    flowop finishonbytes name=finish,value=$bytes
  }
}
