# filemicro_statfile: threads stat() the files of a fileset in turn.
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir           where the fileset directory is created
#   $nfiles        files (all exist at the start)
#   $meandirwidth  mean entries per directory
#   $filesize      bytes per file (fixed)
#   $nthreads      threads calling stat

set $dir=/tmp
set $nfiles=10000
set $meandirwidth=20
set $filesize=128k
set $nthreads=20

define fileset name=bigfileset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=100

define process name=examinefiles,instances=1
{
  thread name=examinefilethread,memsize=10m,instances=$nthreads
  {
    flowop statfile name=statfile1,filesetname=bigfileset
  }
}
