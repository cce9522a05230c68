# filemicro_createrand: grow one file with appends of random size (uniform
# below $iosize, so 512 KiB on average), an fsync after every $iters
# appends, until $bytes have been appended.
#
#   $dir       where the file is created
#   $bytes     bytes appended before the run ends
#   $iosize    appends are uniform [0, this) bytes
#   $iters     appends between two fsyncs
#   $nthreads  appending threads
#   $sync      open the file with O_SYNC (true/false)
#
# The stock file sets no quit mode; fsbench's says firstdone so that the
# finishonbytes limit ends the run.

set $dir=/tmp
set $bytes=1g
set $iosize=1m
set $iters=10
set $nthreads=1
set $sync=false

set mode quit firstdone

define file name=largefile,path=$dir,size=0,prealloc

define process name=filecreater,instances=1
{
  thread name=filecreaterthread,memsize=10m,instances=$nthreads
  {
    flowop appendfilerand name=append-file,filename=largefile,dsync=$sync,iosize=$iosize,iters=$iters
    flowop fsync name=sync
    flowop finishonbytes name=finish,value=$bytes
  }
}
