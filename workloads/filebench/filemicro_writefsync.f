# filemicro_writefsync: grow one file with $writeiters appends, then fsync,
# and again, until $fsynccount fsyncs have been done (1 GiB in 8 MiB steps
# by default).
#
#   $dir         where the file is created
#   $iosize      bytes per append
#   $writeiters  appends between two fsyncs
#   $fsynccount  fsyncs before the run ends
#   $nthreads    appending threads
#   $runtime     longest the run may take, in seconds
#
# The stock file defines $fsynccount but writes 128 into the limit; here the
# limit is the variable.

set $dir=/tmp
set $iosize=8k
set $writeiters=1024
set $fsynccount=128
set $nthreads=1
set $runtime=60

set mode quit firstdone

define file name=bigfile,path=$dir,size=0,prealloc

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop appendfile name=append-file,filename=bigfile,iosize=$iosize,iters=$writeiters
    flowop fsync name=sync-file
    flowop finishoncount name=finish,value=$fsynccount,target=sync-file
  }
}

run $runtime
