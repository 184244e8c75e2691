build-fp/common/query.o: common/query.c common/index_reader.h \
 common/log.h common/walltime.h common/proto.h common/query.h
common/index_reader.h:
common/log.h:
common/walltime.h:
common/proto.h:
common/query.h:
