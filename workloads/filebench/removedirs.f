# removedirs: threads remove the empty leaf directories of a tree (rmdir)
# until none is left; the run ends at the first thread that finds none.
#
#   $dir           where the fileset directory is created
#   $ndirs         leaf directories (all exist at the start)
#   $meandirwidth  mean entries per directory
#   $nthreads      rmdir threads

set $dir=/tmp
set $ndirs=10000
set $meandirwidth=100
set $nthreads=16

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=0,leafdirs=$ndirs,dirwidth=$meandirwidth,prealloc

define process name=remdir,instances=1
{
  thread name=removedirectory,memsize=1m,instances=$nthreads
  {
    flowop removedir name=dirremover,filesetname=bigfileset
  }
}
