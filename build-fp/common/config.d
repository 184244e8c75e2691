build-fp/common/config.o: common/config.c common/config.h
common/config.h:
