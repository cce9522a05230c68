# makedirs: threads create the empty leaf directories of a tree (mkdir)
# until all exist; the run ends at the first thread with none left.
#
#   $dir           where the fileset directory is created
#   $ndirs         leaf directories to create
#   $meandirwidth  mean entries per directory
#   $nthreads      mkdir threads

set $dir=/tmp
set $ndirs=10000
set $meandirwidth=100
set $nthreads=16

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=0,leafdirs=$ndirs,dirwidth=$meandirwidth

define process name=dirmake,instances=1
{
  thread name=dirmaker,memsize=1m,instances=$nthreads
  {
    flowop makedir name=mkdir1,filesetname=bigfileset
  }
}
