# filemicro_rwritefsync: $iters random overwrites of one large file (128 MiB
# in 8 KiB writes by default), then one fsync, then stop: the cost of
# flushing that much dirty data at once.
#
#   $dir       where the file is created
#   $count     I/O operations before the run ends (1: after the first fsync)
#   $filesize  bytes of the file (created before the run)
#   $iosize    bytes per write, at offsets aligned to it
#   $iters     writes before the fsync
#   $nthreads  writing threads
#
# The stock file is 1.4 syntax (cached=false); that attribute is dropped and
# the quit mode is firstdone so the count limit ends the run.

set $dir=/tmp
set $count=1
set $filesize=1g
set $iosize=8k
set $iters=16384
set $nthreads=1

set mode quit firstdone

define file name=bigfile,path=$dir,size=$filesize,prealloc

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop write name=write-file,filename=bigfile,random,iosize=$iosize,iters=$iters
    flowop fsync name=sync-file
    flowop finishoncount name=finish,value=$count
  }
}
