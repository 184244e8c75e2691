#!/usr/bin/python3
# loopsetup.py - udisks' LoopSetup in miniature, for t_hostile_loop.sh.  A
# user opens a file of theirs read-only and passes the descriptor over a
# unix socket; root binds a free loop device to it (root may not be able
# to open the file itself: a FUSE mount without allow_other).
#   loopsetup.py serve SOCKET OUT [partscan]
#                                   (root) one descriptor in, its loop
#                                   device bound (and its partitions
#                                   scanned, as udisks asks); "/dev/loopN"
#                                   into OUT
#   loopsetup.py send SOCKET FILE   (the user) FILE's descriptor out
import fcntl
import os
import socket
import struct
import sys

LOOP_SET_FD = 0x4C00
LOOP_SET_STATUS64 = 0x4C04
LO_FLAGS_PARTSCAN = 8
LOOP_CTL_GET_FREE = 0x4C82


def serve(path, out, partscan):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o666)
    s.listen(1)
    s.settimeout(10)
    c, _ = s.accept()
    _, fds, _, _ = socket.recv_fds(c, 16, 1)
    if len(fds) != 1:
        sys.exit("no descriptor came")
    ctl = os.open("/dev/loop-control", os.O_RDWR)
    # another process may take the free device first: ask again
    for _ in range(20):
        n = fcntl.ioctl(ctl, LOOP_CTL_GET_FREE)
        dev = "/dev/loop%d" % n
        lfd = os.open(dev, os.O_RDWR)
        try:
            fcntl.ioctl(lfd, LOOP_SET_FD, fds[0])
        except OSError as e:
            os.close(lfd)
            if e.errno == 16:   # EBUSY
                continue
            raise
        # named before anything else can fail: the test clears it at exit
        with open(out, "w") as f:
            f.write(dev + "\n")
        if partscan:
            # struct loop_info64: lo_flags after 5 u64 and 3 u32, 232 bytes in all
            info = bytearray(232)
            struct.pack_into("I", info, 52, LO_FLAGS_PARTSCAN)
            fcntl.ioctl(lfd, LOOP_SET_STATUS64, bytes(info))
        os.close(lfd)
        c.sendall(b"ok")
        return
    sys.exit("no free loop device")


def send(path, file):
    fd = os.open(file, os.O_RDONLY)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(path)
    socket.send_fds(c, [b"x"], [fd])
    if c.recv(2) != b"ok":
        sys.exit("the loop device was not set up")


if len(sys.argv) in (4, 5) and sys.argv[1] == "serve":
    serve(sys.argv[2], sys.argv[3], sys.argv[4:] == ["partscan"])
elif len(sys.argv) == 4 and sys.argv[1] == "send":
    send(sys.argv[2], sys.argv[3])
else:
    sys.exit("usage: loopsetup.py serve SOCKET OUT [partscan] | send SOCKET FILE")
