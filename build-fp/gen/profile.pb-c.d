build-fp/gen/profile.pb-c.o: build-fp/gen/profile.pb-c.c \
 build-fp/gen/profile.pb-c.h
build-fp/gen/profile.pb-c.h:
