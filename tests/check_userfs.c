/*
 * check_userfs.c - daemon/capture/userfs.c: where a loop device's backing
 * file is, told by the mount points its path is under, component by
 * component.
 */
#include <stdint.h>
#include <stdio.h>

#include <check.h>

#include "check_main.h"
#include "capture/capture_int.h"

START_TEST(test_path_under)
{
	/* "/" is over every absolute path, and no relative one */
	ck_assert(userfs_path_under("/", "/"));
	ck_assert(userfs_path_under("/", "/a/b"));
	ck_assert(!userfs_path_under("/", "a/b"));
	/* whole components: "/a" is over "/a" and "/a/b", not "/ab" */
	ck_assert(userfs_path_under("/a", "/a"));
	ck_assert(userfs_path_under("/a", "/a/b"));
	ck_assert(!userfs_path_under("/a", "/ab"));
	ck_assert(!userfs_path_under("/a/b", "/a"));
	ck_assert(!userfs_path_under("/a/b", "/a/bc/d"));
	ck_assert(userfs_path_under("/home/u/fuse", "/home/u/fuse/img (deleted)"));
	ck_assert(!userfs_path_under("/home/u/fuse", "/home/u/fuse2/img"));
	/* a mount point written with a slash at its end */
	ck_assert(userfs_path_under("/a/", "/a/b"));
	ck_assert(!userfs_path_under("/a/", "/ab"));
	/* a mount point of blanks (mountinfo's "\040", unescaped) */
	ck_assert(userfs_path_under("/media/u/My Disk", "/media/u/My Disk/x.img"));
	ck_assert(!userfs_path_under("/media/u/My Disk", "/media/u/My"));
}
END_TEST

static Suite *
userfs_suite(void)
{
	Suite	*s = suite_create("userfs");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_path_under);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(userfs_suite)
