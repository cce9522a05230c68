# filemicro_create: build one file from nothing with $count appends of
# $iosize bytes (1 GiB by default), then stop.
#
#   $dir       where the file is created
#   $count     appends before the run ends (all threads together)
#   $iosize    bytes per append
#   $nthreads  appending threads
#   $sync      open the file with O_SYNC (true/false)
#
# The stock file sets no quit mode; fsbench's says firstdone so that the
# finishoncount limit ends the run instead of being an error.

set $dir=/tmp
set $count=1024
set $iosize=1m
set $nthreads=1
set $sync=false

set mode quit firstdone

define file name=largefile,path=$dir,size=0,prealloc

define process name=filecreater,instances=1
{
  thread name=filecreaterthread,memsize=10m,instances=$nthreads
  {
    flowop appendfile name=append-file,filename=largefile,dsync=$sync,iosize=$iosize
    flowop finishoncount name=finish,value=$count
  }
}
