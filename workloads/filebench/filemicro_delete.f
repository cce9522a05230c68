# filemicro_delete: threads delete files from a full fileset until $count
# deletes have been done (all threads together).
#
#   $dir           where the fileset directory is created
#   $count         deletes before the run ends
#   $filesize      bytes per file (fixed)
#   $nfiles        files (all exist at the start)
#   $meandirwidth  mean entries per directory
#   $nthreads      deleting threads

set $dir=/tmp
set $count=1000
set $filesize=16k
set $nfiles=5000
set $meandirwidth=100
set $nthreads=16

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=100,paralloc

define process name=filedelete,instances=1
{
  thread name=filedeletethread,memsize=10m,instances=$nthreads
  {
    flowop deletefile name=deletefile1,filesetname=bigfileset
    flowop opslimit name=limit
    flowop finishoncount name=finish,value=$count
  }
}
