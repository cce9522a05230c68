# openfiles: threads open and close the files of a tree of empty files, to
# measure path lookup and open/close cost.
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir           where the fileset directory is created
#   $nfiles        empty files (all exist at the start)
#   $meandirwidth  mean entries per directory
#   $nthreads      threads opening files

set $dir=/tmp
set $nfiles=50000
set $meandirwidth=100
set $nthreads=16

define fileset name=bigfileset,path=$dir,size=0,entries=$nfiles,dirwidth=$meandirwidth,prealloc

define process name=fileopen,instances=1
{
  thread name=fileopener,memsize=1m,instances=$nthreads
  {
    flowop openfile name=open1,filesetname=bigfileset,fd=1
    flowop closefile name=close1,fd=1
  }
}
