build-fp/common/walltime.o: common/walltime.c common/walltime.h
common/walltime.h:
