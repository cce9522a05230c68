# filemicro_seqwrite: write one file from nothing with $count appends of
# $iosize bytes (1 GiB by default) in a single loop, then stop.
#
#   $dir       where the file is created
#   $count     appends
#   $iosize    bytes per append
#   $nthreads  appending threads
#   $sync      open the file with O_SYNC (true/false)
#
# The stock file is 1.4 syntax (cached=false); that attribute is dropped and
# the quit mode is firstdone so the run ends after the loop.

set $dir=/tmp
set $count=1024
set $iosize=1m
set $nthreads=1
set $sync=false

set mode quit firstdone

define file name=bigfile,path=$dir,size=0,prealloc

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop appendfile name=write-file,dsync=$sync,filename=bigfile,iosize=$iosize,iters=$count
    flowop finishoncount name=finish,value=1
  }
}
