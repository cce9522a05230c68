# createfiles: threads fill an empty directory tree with new files (create,
# write whole, close) until every entry exists; the run ends when the first
# thread finds no entry left to create.
#
#   $dir           where the fileset directory is created
#   $nfiles        files to create
#   $meandirwidth  mean entries per directory
#   $meanfilesize  bytes written to each file (fixed)
#   $iosize        bytes per write() inside the whole-file write
#   $nthreads      creating threads

set $dir=/tmp
set $nfiles=50000
set $meandirwidth=100
set $meanfilesize=16k
set $iosize=1m
set $nthreads=16

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=$meanfilesize,entries=$nfiles,dirwidth=$meandirwidth

define process name=filecreate,instances=1
{
  thread name=filecreatethread,memsize=10m,instances=$nthreads
  {
    flowop createfile name=createfile1,filesetname=bigfileset,fd=1
    flowop writewholefile name=writefile1,fd=1,iosize=$iosize
    flowop closefile name=closefile1,fd=1
  }
}
