/* web_gate.c: the one queue of the requests being answered: a ticket per request, at most `slots`
 * answered at once, admitted in ticket order (web_int.h). Each ticket waits on one of
 * WEB_GATE_CONDS condition variables, so that a request answered wakes the ticket whose turn it is
 * (and the few sharing its variable), not every waiting request. A request that waits for
 * another's answer (the same timeline query being computed) gives its turn back first. */
#include <stdlib.h>
#include <unistd.h>

#include "web_int.h"

/* the gate whose turn this thread holds, if any (a request is answered on one thread) */
static _Thread_local web_gate *turn_held;

web_gate *web_gate_new(unsigned slots)
{
    web_gate *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    pthread_mutex_init(&g->lock, NULL);
    for (unsigned i = 0; i < WEB_GATE_CONDS; i++)
        pthread_cond_init(&g->turn[i], NULL);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    g->slots = slots ? slots : cpus > 0 ? (unsigned)cpus : 1;
    return g;
}

void web_gate_free(web_gate *g)
{
    if (!g)
        return;
    for (unsigned i = 0; i < WEB_GATE_CONDS; i++)
        pthread_cond_destroy(&g->turn[i]);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

void web_gate_enter(web_gate *g)
{
    pthread_mutex_lock(&g->lock);
    uint64_t k = g->next++;
    while (k >= g->done + g->slots) /* ticket k goes once done + slots > k */
        pthread_cond_wait(&g->turn[k % WEB_GATE_CONDS], &g->lock);
    pthread_mutex_unlock(&g->lock);
    turn_held = g;
}

void web_gate_leave(web_gate *g)
{
    if (turn_held != g)
        return; /* given back already */
    turn_held = NULL;
    pthread_mutex_lock(&g->lock);
    uint64_t k = ++g->done + g->slots - 1; /* the one ticket that may go now */
    if (k < g->next)
        pthread_cond_broadcast(&g->turn[k % WEB_GATE_CONDS]);
    pthread_mutex_unlock(&g->lock);
}

void web_gate_give_back(void)
{
    if (turn_held)
        web_gate_leave(turn_held);
}

uint64_t web_gate_tickets(web_gate *g)
{
    pthread_mutex_lock(&g->lock);
    uint64_t n = g->next;
    pthread_mutex_unlock(&g->lock);
    return n;
}
