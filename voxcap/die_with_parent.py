"""The first lines of a Python child of voxcap (``python -c BOOT voxcap's-pid ...``): it asks the
kernel for SIGKILL when its parent goes (``PR_SET_PDEATHSIG``, before any import, a few ms after
exec), and leaves at once if the parent already went. The kernel's signal follows the thread
that started the child, not the process: start it from a thread that lives as long as its use.
"""

BOOT_PREFIX = ("import ctypes, os, sys\n"
               "ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)\n"  # PR_SET_PDEATHSIG = 1, SIGKILL = 9
               "if os.getppid() != int(sys.argv[1]): os._exit(1)\n")
