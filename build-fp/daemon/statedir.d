build-fp/daemon/statedir.o: daemon/statedir.c common/log.h \
 daemon/statedir.h
common/log.h:
daemon/statedir.h:
