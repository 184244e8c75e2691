build-fp/common/hostinfo.o: common/hostinfo.c common/hostinfo.h
common/hostinfo.h:
