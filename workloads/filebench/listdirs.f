# listdirs: threads list the directories of a deep tree of empty files
# (opendir, readdir to the end, closedir as one operation).
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir           where the fileset directory is created
#   $nfiles        empty files in the tree (all exist at the start)
#   $meandirwidth  mean entries per directory; 5 makes the tree deep
#   $nthreads      listing threads

set $dir=/tmp
set $nfiles=50000
set $meandirwidth=5
set $nthreads=16

define fileset name=bigfileset,path=$dir,size=0,entries=$nfiles,dirwidth=$meandirwidth,prealloc

define process name=lsdir,instances=1
{
  thread name=dirlister,memsize=1m,instances=$nthreads
  {
    flowop listdir name=open1,filesetname=bigfileset
  }
}
