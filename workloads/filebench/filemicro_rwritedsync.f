# filemicro_rwritedsync: random synchronous (O_SYNC) overwrites of one large
# file until $count writes have been done.
#
#   $dir       where the file is created
#   $count     writes before the run ends
#   $filesize  bytes of the file (created before the run)
#   $iosize    bytes per write, at offsets aligned to it
#   $iters     writes per loop
#   $nthreads  writing threads

set $dir=/tmp
set $count=65536
set $filesize=1g
set $iosize=2k
set $iters=1
set $nthreads=1

set mode quit firstdone

define file name=bigfile,path=$dir,size=$filesize,prealloc,reuse

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop write name=write-file,filename=bigfile,random,dsync,iosize=$iosize,iters=$iters
    flowop finishoncount name=finish,value=$count
  }
}
