build-fp/common/profile/params.o: common/profile/params.c \
 common/index_reader.h common/walltime.h common/profile/profile.h
common/index_reader.h:
common/walltime.h:
common/profile/profile.h:
