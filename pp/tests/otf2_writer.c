/* Writes an OTF2 trace from a script, with the OTF2 writer API, for pp's import tests
 * (pp/tests/otf2_import.rs). Usage: otf2_writer DIR NAME < SCRIPT writes DIR/NAME.otf2.
 *
 * One record a line, fields separated by spaces; '#' starts a comment line.
 * Definitions (written after every event, as a measurement system does):
 *   clock RESOLUTION OFFSET LENGTH
 *   string ID TEXT...                     (the rest of the line)
 *   region ID NAME_STRING ROLE PARADIGM
 *   process ID NAME_STRING                (a location group of type process)
 *   thread ID NAME_STRING PROCESS         (a location of type CPU thread)
 *   metric_location ID NAME_STRING PROCESS
 *   group ID NAME_STRING TYPE PARADIGM MEMBER...
 *   comm ID NAME_STRING GROUP
 * Events (per location in time order):
 *   enter LOC T REGION | leave LOC T REGION
 *   send LOC T PEER COMM TAG BYTES | isend LOC T PEER COMM TAG BYTES REQ
 *   recv LOC T PEER COMM TAG BYTES | irecv LOC T PEER COMM TAG BYTES REQ
 *   isend_complete LOC T REQ | irecv_request LOC T REQ
 *   coll_begin LOC T | coll_end LOC T OP COMM ROOT SENT RECEIVED   (ROOT -1: none)
 *   omp_fork LOC T N | omp_join LOC T | omp_acquire LOC T LOCK ORDER | omp_release LOC T LOCK ORDER
 *   thread_fork LOC T N | thread_join LOC T | team_begin LOC T COMM | team_end LOC T COMM
 *   thread_acquire LOC T LOCK ORDER | thread_release LOC T LOCK ORDER
 *   thread_create LOC T COMM SEQ | thread_begin LOC T COMM SEQ | thread_wait LOC T COMM SEQ
 *   thread_end LOC T COMM SEQ             (pthreads, as Score-P's pthread adapter writes them)
 *   rma_put LOC T WIN REMOTE BYTES ID
 *   pairs LOC T0 DT N REGION              (N enter/leave pairs of REGION, DT ticks apart)
 */
#define _GNU_SOURCE
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc,
                                void *caller, bool final) {
    (void)user; (void)type; (void)loc; (void)caller; (void)final;
    return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc) {
    (void)user; (void)type; (void)loc;
    return 0;
}
static OTF2_FlushCallbacks flush = {.otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush};

#define MAX_LOCS 256
static OTF2_LocationRef locs[MAX_LOCS];
static OTF2_EvtWriter *writers[MAX_LOCS];
static uint64_t counts[MAX_LOCS];
static int nlocs;
static OTF2_Archive *archive;

static int slot(OTF2_LocationRef loc) {
    for (int i = 0; i < nlocs; i++)
        if (locs[i] == loc) return i;
    if (nlocs == MAX_LOCS) { fprintf(stderr, "too many locations\n"); exit(2); }
    locs[nlocs] = loc;
    writers[nlocs] = OTF2_Archive_GetEvtWriter(archive, loc);
    return nlocs++;
}

static void check(OTF2_ErrorCode e, const char *what, int line) {
    if (e != OTF2_SUCCESS) {
        fprintf(stderr, "line %d: %s: %s\n", line, what, OTF2_Error_GetDescription(e));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: otf2_writer DIR NAME < SCRIPT\n"); return 2; }
    archive = OTF2_Archive_Open(argv[1], argv[2], OTF2_FILEMODE_WRITE, 1024 * 1024,
                                4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive) { fprintf(stderr, "cannot open the archive\n"); return 1; }
    OTF2_Archive_SetFlushCallbacks(archive, &flush, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(archive);
    OTF2_Archive_OpenEvtFiles(archive);

    size_t cap = 1024, n = 0;
    char **defs = malloc(cap * sizeof *defs);
    char *line = NULL;
    size_t len = 0;
    int lineno = 0;
    while (getline(&line, &len, stdin) > 0) {
        lineno++;
        char op[32];
        unsigned long long loc, t;
        if (sscanf(line, "%31s", op) != 1 || op[0] == '#') continue;
        if (sscanf(line, "%*s %llu %llu", &loc, &t) != 2 || !strcmp(op, "string") ||
            !strcmp(op, "region") || !strcmp(op, "process") || !strcmp(op, "thread") ||
            !strcmp(op, "group") || !strcmp(op, "comm") || !strcmp(op, "clock") ||
            !strcmp(op, "metric_location")) {
            if (n == cap) defs = realloc(defs, (cap *= 2) * sizeof *defs);
            defs[n++] = strdup(line);
            continue;
        }
        int i = slot(loc);
        OTF2_EvtWriter *w = writers[i];
        unsigned long long a = 0, b = 0, c = 0, d = 0, e = 0;
        long long r = 0;
        const char *args = line;
        for (int k = 0; k < 3; k++) args = strchr(args, ' ') ? strchr(args, ' ') + 1 : "";
        OTF2_ErrorCode err = OTF2_SUCCESS;
        counts[i]++;
        if (!strcmp(op, "enter")) {
            sscanf(args, "%llu", &a);
            err = OTF2_EvtWriter_Enter(w, NULL, t, a);
        } else if (!strcmp(op, "leave")) {
            sscanf(args, "%llu", &a);
            err = OTF2_EvtWriter_Leave(w, NULL, t, a);
        } else if (!strcmp(op, "send") || !strcmp(op, "recv") || !strcmp(op, "isend") ||
                   !strcmp(op, "irecv")) {
            sscanf(args, "%llu %llu %llu %llu %llu", &a, &b, &c, &d, &e);
            if (!strcmp(op, "send")) err = OTF2_EvtWriter_MpiSend(w, NULL, t, a, b, c, d);
            else if (!strcmp(op, "recv")) err = OTF2_EvtWriter_MpiRecv(w, NULL, t, a, b, c, d);
            else if (!strcmp(op, "isend")) err = OTF2_EvtWriter_MpiIsend(w, NULL, t, a, b, c, d, e);
            else err = OTF2_EvtWriter_MpiIrecv(w, NULL, t, a, b, c, d, e);
        } else if (!strcmp(op, "isend_complete")) {
            sscanf(args, "%llu", &a);
            err = OTF2_EvtWriter_MpiIsendComplete(w, NULL, t, a);
        } else if (!strcmp(op, "irecv_request")) {
            sscanf(args, "%llu", &a);
            err = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, a);
        } else if (!strcmp(op, "coll_begin")) {
            err = OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t);
        } else if (!strcmp(op, "coll_end")) {
            sscanf(args, "%llu %llu %lld %llu %llu", &a, &b, &r, &c, &d);
            err = OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t, a, b,
                                                  r < 0 ? OTF2_UNDEFINED_UINT32 : (uint32_t)r, c, d);
        } else if (!strcmp(op, "omp_fork")) {
            sscanf(args, "%llu", &a);
            err = OTF2_EvtWriter_OmpFork(w, NULL, t, a);
        } else if (!strcmp(op, "omp_join")) {
            err = OTF2_EvtWriter_OmpJoin(w, NULL, t);
        } else if (!strcmp(op, "omp_acquire") || !strcmp(op, "omp_release")) {
            sscanf(args, "%llu %llu", &a, &b);
            err = !strcmp(op, "omp_acquire") ? OTF2_EvtWriter_OmpAcquireLock(w, NULL, t, a, b)
                                            : OTF2_EvtWriter_OmpReleaseLock(w, NULL, t, a, b);
        } else if (!strcmp(op, "thread_fork")) {
            sscanf(args, "%llu", &a);
            err = OTF2_EvtWriter_ThreadFork(w, NULL, t, OTF2_PARADIGM_OPENMP, a);
        } else if (!strcmp(op, "thread_join")) {
            err = OTF2_EvtWriter_ThreadJoin(w, NULL, t, OTF2_PARADIGM_OPENMP);
        } else if (!strcmp(op, "team_begin") || !strcmp(op, "team_end")) {
            sscanf(args, "%llu", &a);
            err = !strcmp(op, "team_begin") ? OTF2_EvtWriter_ThreadTeamBegin(w, NULL, t, a)
                                           : OTF2_EvtWriter_ThreadTeamEnd(w, NULL, t, a);
        } else if (!strcmp(op, "thread_acquire") || !strcmp(op, "thread_release")) {
            sscanf(args, "%llu %llu", &a, &b);
            err = !strcmp(op, "thread_acquire")
                      ? OTF2_EvtWriter_ThreadAcquireLock(w, NULL, t, OTF2_PARADIGM_OPENMP, a, b)
                      : OTF2_EvtWriter_ThreadReleaseLock(w, NULL, t, OTF2_PARADIGM_OPENMP, a, b);
        } else if (!strcmp(op, "thread_create") || !strcmp(op, "thread_begin") ||
                   !strcmp(op, "thread_wait") || !strcmp(op, "thread_end")) {
            sscanf(args, "%llu %llu", &a, &b);
            err = !strcmp(op, "thread_create")  ? OTF2_EvtWriter_ThreadCreate(w, NULL, t, a, b)
                  : !strcmp(op, "thread_begin") ? OTF2_EvtWriter_ThreadBegin(w, NULL, t, a, b)
                  : !strcmp(op, "thread_wait")  ? OTF2_EvtWriter_ThreadWait(w, NULL, t, a, b)
                                                : OTF2_EvtWriter_ThreadEnd(w, NULL, t, a, b);
        } else if (!strcmp(op, "rma_put")) {
            sscanf(args, "%llu %llu %llu %llu", &a, &b, &c, &d);
            err = OTF2_EvtWriter_RmaPut(w, NULL, t, a, b, c, d);
        } else if (!strcmp(op, "pairs")) {
            /* pairs LOC T0 DT N REGION */
            sscanf(args, "%llu %llu %llu", &a, &b, &c);
            for (unsigned long long k = 0; k < b && err == OTF2_SUCCESS; k++) {
                err = OTF2_EvtWriter_Enter(w, NULL, t + 2 * k * a, c);
                if (err == OTF2_SUCCESS) err = OTF2_EvtWriter_Leave(w, NULL, t + (2 * k + 1) * a, c);
            }
            counts[i] += 2 * b - 1;
        } else {
            fprintf(stderr, "line %d: unknown record %s\n", lineno, op);
            return 2;
        }
        check(err, op, lineno);
    }
    for (int i = 0; i < nlocs; i++) OTF2_Archive_CloseEvtWriter(archive, writers[i]);
    OTF2_Archive_CloseEvtFiles(archive);

    OTF2_Archive_OpenDefFiles(archive);
    for (int i = 0; i < nlocs; i++)
        OTF2_Archive_CloseDefWriter(archive, OTF2_Archive_GetDefWriter(archive, locs[i]));
    OTF2_Archive_CloseDefFiles(archive);

    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
    int have_tree = 0;
    for (size_t k = 0; k < n; k++) {
        char op[32];
        unsigned long long a = 0, b = 0, c = 0, d = 0;
        int off = 0;
        sscanf(defs[k], "%31s %llu%n", op, &a, &off);
        OTF2_ErrorCode err = OTF2_SUCCESS;
        if (!strcmp(op, "string")) {
            char *text = defs[k] + off;
            while (*text == ' ') text++;
            text[strcspn(text, "\n")] = 0;
            err = OTF2_GlobalDefWriter_WriteString(g, a, text);
            if (!have_tree && err == OTF2_SUCCESS) {
                /* One system tree node (named by the first string) for every process. */
                err = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, a, a, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
                have_tree = 1;
            }
        } else if (!strcmp(op, "clock")) {
            sscanf(defs[k], "%*s %llu %llu %llu", &a, &b, &c);
            err = OTF2_GlobalDefWriter_WriteClockProperties(g, a, b, c, OTF2_UNDEFINED_TIMESTAMP);
        } else if (!strcmp(op, "region")) {
            sscanf(defs[k], "%*s %llu %llu %llu %llu", &a, &b, &c, &d);
            err = OTF2_GlobalDefWriter_WriteRegion(g, a, b, b, b, c, d, OTF2_REGION_FLAG_NONE,
                                                   OTF2_UNDEFINED_STRING, 0, 0);
        } else if (!strcmp(op, "process")) {
            sscanf(defs[k], "%*s %llu %llu", &a, &b);
            err = OTF2_GlobalDefWriter_WriteLocationGroup(g, a, b, OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                          0, OTF2_UNDEFINED_LOCATION_GROUP);
        } else if (!strcmp(op, "thread") || !strcmp(op, "metric_location")) {
            sscanf(defs[k], "%*s %llu %llu %llu", &a, &b, &c);
            uint64_t events = 0;
            for (int i = 0; i < nlocs; i++)
                if (locs[i] == a) events = counts[i];
            err = OTF2_GlobalDefWriter_WriteLocation(
                g, a, b, !strcmp(op, "thread") ? OTF2_LOCATION_TYPE_CPU_THREAD : OTF2_LOCATION_TYPE_METRIC,
                events, c);
        } else if (!strcmp(op, "group")) {
            uint64_t members[1024];
            uint32_t m = 0;
            char *p = defs[k];
            int used;
            sscanf(p, "%*s %llu %llu %llu %llu%n", &a, &b, &c, &d, &used);
            p += used;
            unsigned long long v;
            while (m < 1024 && sscanf(p, "%llu%n", &v, &used) == 1) { members[m++] = v; p += used; }
            err = OTF2_GlobalDefWriter_WriteGroup(g, a, b, c, d, OTF2_GROUP_FLAG_NONE, m, members);
        } else if (!strcmp(op, "comm")) {
            sscanf(defs[k], "%*s %llu %llu %llu", &a, &b, &c);
            err = OTF2_GlobalDefWriter_WriteComm(g, a, b, c, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
        }
        check(err, op, 0);
    }
    check(OTF2_Archive_Close(archive), "close", 0);
    return 0;
}
