# copyfiles: copies a directory tree file by file (open and read a source
# file, create the copy and write it from the source's size, close both);
# the run ends when every destination file exists.
#
#   $dir           where both fileset directories are created
#   $nfiles        files to copy (the source tree exists in full)
#   $meandirwidth  mean entries per directory, in both trees
#   $meanfilesize  bytes per source file (fixed)
#   $iosize        bytes per read() and write() while copying
#   $nthreads      copying threads

set $dir=/tmp
set $nfiles=1000
set $meandirwidth=20
set $meanfilesize=16k
set $iosize=1m
set $nthreads=1

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=$meanfilesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=100,paralloc
define fileset name=destfiles,path=$dir,size=$meanfilesize,entries=$nfiles,dirwidth=$meandirwidth

define process name=filereader,instances=1
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop openfile name=openfile1,filesetname=bigfileset,fd=1
    flowop readwholefile name=readfile1,fd=1,iosize=$iosize
    flowop createfile name=createfile2,filesetname=destfiles,fd=2
    flowop writewholefile name=writefile2,fd=2,srcfd=1,iosize=$iosize
    flowop closefile name=closefile1,fd=1
    flowop closefile name=closefile2,fd=2
  }
}
