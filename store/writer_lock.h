/*
 * writer_lock.h - one writing passnet process per store.
 *
 * LMDB lets one write transaction run at a time, but two processes writing
 * one store would interleave their batches.  So a writer first takes a POSIX
 * record lock on DIR/writer.lock: a second process says once, on stderr,
 * which process is writing, and waits for it to end (the kernel drops the
 * lock of a process that dies, SIGKILL included).  Readers take no lock:
 * LMDB gives them a consistent snapshot.  POSIX locks belong to the
 * process, so a process's own second writer is not held up here (store.c
 * refuses that one itself).
 */
#ifndef PN_WRITER_LOCK_H
#define PN_WRITER_LOCK_H

/* The lock's fd into *fd: 0, or -1 (err set). */
int  pn_writer_lock(const char *dir, int *fd, char *err);
void pn_writer_unlock(int fd);

#endif
