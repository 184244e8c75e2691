build-fp/common/arena.o: common/arena.c common/arena.h
common/arena.h:
