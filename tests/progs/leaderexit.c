/*
 * leaderexit.c - a process whose main thread has exited (pthread_exit)
 * while another of its threads runs on: its leader is a zombie, which
 * /proc/PID/task still lists, and /proc/PID/maps is empty (the leader's
 * memory is gone).  Prints "ready" once the main thread is about to exit;
 * the other thread exits, and the process with it, on SIGUSR1.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void *
worker(void *arg)
{
	sigset_t set;
	int	 sig;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
	return NULL;
}

int
main(void)
{
	pthread_t t;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* inherited: sigwait takes it */
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	pthread_exit(NULL);
}
