build-fp/common/proto.o: common/proto.c common/proto.h
common/proto.h:
