/*
 * check_ctl.c - the control command tables: the daemon's (daemon/ctl.c) and
 * the client's (client/commands.c) agree, every entry is complete and
 * unique, every command is documented in perfmapctl(8), and privileges
 * are as documented.  The interface definitions the daemon serves are the
 * repository's files byte for byte, and io.perfmap.varlink declares every
 * command with the parameters the table accepts (the reference parser and
 * client judge the rest: tests/integration/t_varlink.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"

#include "client.h"
#include "control/command.h"
#include "control/interfaces.h"

static char *
slurp(const char *path)
{
	FILE	*f = fopen(path, "r");
	char	*buf;
	long	 n;

	ck_assert_msg(f != NULL, "cannot open %s (tests run from the top)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

START_TEST(test_daemon_table_complete_unique)
{
	size_t	 i, j;

	ck_assert_uint_gt(control_ncommands, 0);
	for (i = 0; i < control_ncommands; i++) {
		const struct control_command *e = control_commands[i];

		ck_assert_ptr_nonnull(e->name);
		ck_assert_ptr_nonnull(e->handler);
		ck_assert_msg(e->usage != NULL && strncmp(e->usage, e->name, strlen(e->name)) == 0,
		    "%s: usage must start with the command name", e->name);
		ck_assert_msg(e->help != NULL && e->help[0] != '\0', "%s: no help", e->name);
		ck_assert_msg(strncmp(e->method, "io.perfmap.", 11) == 0, "%s: method %s",
		    e->name, e->method);
		ck_assert_ptr_eq(control_find_method(e->method), e);
		for (j = i + 1; j < control_ncommands; j++) {
			ck_assert_str_ne(e->name, control_commands[j]->name);
			ck_assert_str_ne(e->method, control_commands[j]->method);
		}
	}
	ck_assert_ptr_null(control_find_method("io.perfmap.NoSuchThing"));
}
END_TEST

START_TEST(test_client_mirrors_daemon)
{
	size_t	 i;

	ck_assert_uint_eq(client_ncmds, control_ncommands);
	for (i = 0; i < control_ncommands; i++) {
		const struct client_cmd *c = client_find(control_commands[i]->name);

		ck_assert_msg(c != NULL, "perfmapctl lacks %s", control_commands[i]->name);
		ck_assert_str_eq(c->method, control_commands[i]->method);
		ck_assert_str_eq(c->usage, control_commands[i]->usage);
		ck_assert_ptr_nonnull(c->parse);
		ck_assert_ptr_nonnull(c->print);
	}
}
END_TEST

START_TEST(test_every_command_in_man_page)
{
	char	*man = slurp("man/perfmapctl.8");
	size_t	 i;

	for (i = 0; i < control_ncommands; i++) {
		char	 item[128], item_args[128], method[128];

		/* ".It Ic NAME" alone or followed by its arguments */
		snprintf(item, sizeof(item), ".It Ic %s\n", control_commands[i]->name);
		snprintf(item_args, sizeof(item_args), ".It Ic %s ", control_commands[i]->name);
		snprintf(method, sizeof(method), ".Li %s", control_commands[i]->method);
		ck_assert_msg(strstr(man, item) != NULL || strstr(man, item_args) != NULL,
		    "perfmapctl.8 does not document %s", control_commands[i]->name);
		ck_assert_msg(strstr(man, method) != NULL, "perfmapctl.8 does not name %s",
		    control_commands[i]->method);
	}
	free(man);
}
END_TEST

START_TEST(test_privileges)
{
	size_t	 i;

	/* What changes the daemon's state needs privileges; ping is open. */
	for (i = 0; i < control_ncommands; i++) {
		const struct control_command *e = control_commands[i];

		if (strcmp(e->name, "ping") == 0)
			ck_assert_int_eq(e->flags & CMD_PUBLIC, CMD_PUBLIC);
		else if (strcmp(e->name, "status") == 0)
			ck_assert_int_eq(e->flags & (CMD_PRIV | CMD_PUBLIC), 0);
		else if (strcmp(e->name, "snapshot") == 0 || strcmp(e->name, "stop") == 0 ||
		    strcmp(e->name, "reload") == 0 || strcmp(e->name, "store") == 0 ||
		    strcmp(e->name, "export") == 0)
			ck_assert_msg(e->flags & CMD_PRIV, "%s must be privileged", e->name);
		ck_assert_msg(!((e->flags & CMD_PRIV) && (e->flags & CMD_PUBLIC)),
		    "%s is both privileged and public", e->name);
	}
}
END_TEST

START_TEST(test_client_parse_rejects_extra_args)
{
	const struct client_cmd *c = client_find("status");
	char	*argv[] = { "surprise", NULL };
	char	 err[128] = "";

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(c->parse(1, argv, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "surprise"));
}
END_TEST

/*
 * An argument the protocol cannot carry (not UTF-8) is refused, not
 * dropped: "segments \xff" listed every segment, "profile --comm \xff..."
 * profiled the whole host, and a time before 1970 was taken for now.
 */
START_TEST(test_client_parse_not_text)
{
	char	*seg[] = { "perf-\xff.data", NULL };
	char	*comm[] = { "--since", "-1m", "--comm", "a\xff", "-o", "/tmp/x.folded", NULL };
	char	*at[] = { "/bin/sh", "--at", "-30000d", NULL };
	char	 err[256] = "";
	json_t	*p;

	p = client_find("segments")->parse(1, seg, err, sizeof(err));
	ck_assert_msg(p == NULL, "segments with a name not UTF-8: %s",
	    p != NULL ? json_dumps(p, 0) : "");
	ck_assert_ptr_nonnull(strstr(err, "UTF-8"));
	err[0] = '\0';
	p = client_find("profile")->parse(6, comm, err, sizeof(err));
	ck_assert_msg(p == NULL, "profile --comm not UTF-8: %s", p != NULL ? json_dumps(p, 0) : "");
	ck_assert_ptr_nonnull(strstr(err, "UTF-8"));
	err[0] = '\0';
	p = client_find("store")->parse(1, seg, err, sizeof(err));
	ck_assert_msg(p == NULL, "store of a name not UTF-8: %s", p != NULL ? json_dumps(p, 0) : "");
	ck_assert_ptr_nonnull(strstr(err, "UTF-8"));
	err[0] = '\0';
	p = client_find("lookup")->parse(3, at, err, sizeof(err));
	ck_assert_msg(p == NULL, "lookup --at before 1970: %s", p != NULL ? json_dumps(p, 0) : "");
	ck_assert_ptr_nonnull(strstr(err, "1970"));
}
END_TEST

START_TEST(test_interfaces_verbatim)
{
	unsigned i;

	ck_assert_uint_eq(control_ninterfaces, 2);
	for (i = 0; i < control_ninterfaces; i++) {
		char	 path[128], *file;

		snprintf(path, sizeof(path), "daemon/control/%s.varlink", control_interfaces[i].name);
		file = slurp(path);
		ck_assert_msg(strcmp(file, control_interfaces[i].description) == 0,
		    "%s: the daemon serves something else", path);
		ck_assert_ptr_eq(control_interface_find(control_interfaces[i].name,
		    (unsigned)strlen(control_interfaces[i].name)), &control_interfaces[i]);
		free(file);
	}
	ck_assert_ptr_null(control_interface_find("io.perf", 7));
}
END_TEST

/* The parameter names of "method NAME(...)" in IDL, space-separated; NULL if absent. */
static char *
idl_params(const char *idl, const char *name, char *out, size_t len)
{
	char	 head[128];
	const char *p, *end;
	size_t	 n = 0;

	snprintf(head, sizeof(head), "\nmethod %s(", name);
	if ((p = strstr(idl, head)) == NULL)
		return NULL;
	p += strlen(head);
	end = strchr(p, ')');
	out[0] = '\0';
	while (p < end) {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		const char *start;

		if (colon == NULL)
			break;
		for (start = colon; start > p && (start[-1] == '_' ||
		    (start[-1] >= 'a' && start[-1] <= 'z')); start--)
			;
		n += (size_t)snprintf(out + n, len - n, "%s%.*s", n ? " " : "",
		    (int)(colon - start), start);
		p = colon + 1;
	}
	return out;
}

START_TEST(test_interface_declares_table)
{
	char	*idl = slurp("daemon/control/io.perfmap.varlink"), want[256], got[256];
	const char *p;
	size_t	 i, j, nmethods = 0;

	for (i = 0; i < control_ncommands; i++) {
		const struct control_command *e = control_commands[i];
		const char *name = strrchr(e->method, '.') + 1;

		ck_assert_msg(idl_params(idl, name, got, sizeof(got)) != NULL,
		    "io.perfmap.varlink does not declare %s", e->method);
		want[0] = '\0';
		for (j = 0; e->params[j] != NULL; j++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
			    j ? " " : "", e->params[j]);
		ck_assert_msg(strcmp(got, want) == 0, "%s: the interface declares (%s), "
		    "the table takes (%s)", e->method, got, want);
	}
	for (p = idl; (p = strstr(p, "\nmethod ")) != NULL; p++)
		nmethods++;
	ck_assert_uint_eq(nmethods, control_ncommands);
	free(idl);
}
END_TEST

/* What a printer writes, into BUF. */
static void
render(void (*print)(json_t *, FILE *), const char *json, char *buf, size_t len)
{
	json_error_t je;
	json_t	*p = json_loads(json, 0, &je);
	FILE	*f = fmemopen(buf, len, "w");

	ck_assert_msg(p != NULL, "%s", je.text);
	ck_assert_ptr_nonnull(f);
	print(p, f);
	fclose(f);
	json_decref(p);
}

/* Text for people: aligned columns, no tabs, names escaped, unknowns as "-". */
START_TEST(test_text_tables)
{
	char	 out[4096];
	const char *l2;

	render(query_print_segments, "{\"segments\": [{\"seq\": 1, \"start\": \"a\", "
	    "\"end\": \"b\", \"size\": 2048, \"samples\": 12345, \"lost\": 0, \"state\": "
	    "\"closed\", \"name\": \"perf-1.data\"}, {\"seq\": 22, \"start\": \"c\", "
	    "\"end\": null, \"size\": 10, \"samples\": null, \"lost\": null, \"state\": "
	    "\"open\", \"name\": \"perf-22.data.partial\"}]}", out, sizeof(out));
	ck_assert_ptr_null(strchr(out, '\t'));
	ck_assert_str_eq(out,
	    "SEQ  START  END     SIZE  SAMPLES  LOST  STATE   NAME\n"
	    "  1  a      b    2.0 KiB    12345     0  closed  perf-1.data\n"
	    " 22  c      -       10 B        -     -  open    perf-22.data.partial\n");

	/* a hostile file name cannot break the table or talk to the terminal */
	render(query_print_history, "{\"path\": \"/x\", \"objects\": [{\"build_id\": \"ab\", "
	    "\"first_seen\": \"f\", \"last_seen\": \"l\", \"nr_maps\": 1, \"nr_procs\": 1, "
	    "\"segments\": 3, \"source\": \"mmap2\\n\\u001b[2J\"}]}", out, sizeof(out));
	ck_assert_ptr_nonnull(strstr(out, "mmap2\\x0a\\x1b[2J\n"));
	ck_assert_ptr_null(strstr(out, "NAMESPACE"));
	ck_assert_ptr_nonnull(strstr(out, "SEGS"));

	/* the index's mount namespace, once its rows carry it */
	render(query_print_history, "{\"path\": \"/x\", \"objects\": [{\"build_id\": \"ab\", "
	    "\"first_seen\": \"f\", \"last_seen\": \"l\", \"nr_maps\": 1, \"nr_procs\": 1, "
	    "\"segments\": 3, \"source\": \"mmap2\", \"mnt_ns\": 4026531841}, "
	    "{\"build_id\": \"cd\", \"first_seen\": \"f\", \"last_seen\": \"l\", "
	    "\"nr_maps\": 1, \"nr_procs\": 1, \"segments\": 3, \"source\": \"mmap2\"}]}",
	    out, sizeof(out));
	ck_assert_ptr_nonnull(strstr(out, "SOURCE  NAMESPACE\n"));
	ck_assert_ptr_nonnull(strstr(out, "mmap2   4026531841\n"));
	l2 = strstr(out, "cd  ");
	ck_assert_ptr_nonnull(l2);
	ck_assert_ptr_nonnull(strstr(l2, "mmap2   -\n"));
}
END_TEST

static Suite *
control_suite(void)
{
	Suite	*s = suite_create("ctl");
	TCase	*tc = tcase_create("tables");

	tcase_add_test(tc, test_daemon_table_complete_unique);
	tcase_add_test(tc, test_client_mirrors_daemon);
	tcase_add_test(tc, test_every_command_in_man_page);
	tcase_add_test(tc, test_privileges);
	tcase_add_test(tc, test_client_parse_rejects_extra_args);
	tcase_add_test(tc, test_client_parse_not_text);
	tcase_add_test(tc, test_interfaces_verbatim);
	tcase_add_test(tc, test_interface_declares_table);
	tcase_add_test(tc, test_text_tables);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(control_suite)
