/*
 * gcn3-isa-coverage - the ISA coverage table (docs/isa-coverage.md), generated
 * from the instruction table gcn/gcn3.def.
 *
 *   gcn3-isa-coverage CORPUS > docs/isa-coverage.md
 *
 * CORPUS is tests/isa/gfx803-corpus.s ("TEXT ; encoding: [bytes]" lines, LLVM
 * 14's own disassembly of each encoding, from tests/isa/gen-corpus.py). For
 * every gfx803 opcode of the table it reports:
 *   decode       the op's (mask, match) pattern decodes to the op;
 *   disassemble  corpus lines of the op whose gcn_disasm() text equals LLVM's
 *                (k/n; "-" when the corpus has none);
 *   execute      gcn_sem_handlers[op] != NULL (emu/isa/gcn_sem*.c);
 *   SDWA / DPP   for VOP1/VOP2/VOPC ops that have those forms in the corpus:
 *                disassembly agreement, and "exec" when the plain handler exists
 *                and the operands are 32-bit (gcn_sem_dpp.c runs SDWA/DPP
 *                through the plain handler; 64-bit forms do not exist on gfx8).
 * The output is deterministic: tests/e2e/objdump-diff.sh checks that the
 * checked-in docs/isa-coverage.md equals it.
 *
 * Exit status: 0 ok, 1 unreadable corpus, 2 usage.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcn/gcn_isa.h"
#include "gcn/gcn_operand.h"
#include "emu/isa/gcn_sem.h"
#include "gcn3sim_version.h"

enum { F_NATIVE, F_E64, F_SDWA, F_DPP, F_N };
typedef struct cnt { unsigned n[F_N], ok[F_N]; } cnt;

static void squeeze(char *s)
{
    char *d = s;
    int sp = 0;
    for (char *p = s; *p; p++) {
        if (isspace((unsigned char)*p)) { sp = d != s; continue; }
        if (sp) *d++ = ' ';
        sp = 0;
        *d++ = *p;
    }
    *d = 0;
}

static unsigned lookup(const char *mnemonic)
{
    char base[96];
    snprintf(base, sizeof base, "%s", mnemonic);
    static const char *const sfx[] = {"_e32", "_e64", "_sdwa", "_dpp"};
    for (unsigned op = 1; op < GCN_OP_COUNT; op++)
        if (!strcmp(gcn_op_name(op), base)) return op;
    for (int k = 0; k < 4; k++) {
        size_t l = strlen(base), s = strlen(sfx[k]);
        if (l > s && !strcmp(base + l - s, sfx[k])) {
            base[l - s] = 0;
            for (unsigned op = 1; op < GCN_OP_COUNT; op++)
                if (!strcmp(gcn_op_name(op), base)) return op;
        }
    }
    return 0;
}

static const char *fmt_name(unsigned f)
{
    static const char *const n[] = {"?", "SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "SMEM", "VOP2", "VOP1", "VOPC",
                                    "VOP3", "VINTRP", "DS", "MUBUF", "MTBUF", "FLAT", "MIMG", "EXP"};
    return f < sizeof n / sizeof n[0] ? n[f] : "?";
}

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: gcn3-isa-coverage CORPUS   (tests/isa/gfx803-corpus.s)\n"
               "Decode every line of an llvm-mc -show-encoding corpus with the emulator's decoder and\n"
               "report, per instruction format, which instructions it knows. --help, --version.\n");
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("gcn3-isa-coverage %s (commit %s)\n", GCN3SIM_VERSION, GCN3SIM_COMMIT);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: gcn3-isa-coverage CORPUS   (tests/isa/gfx803-corpus.s)\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "gcn3-isa-coverage: %s: cannot open\n", argv[1]);
        return 1;
    }
    static cnt c[GCN_OP_COUNT];
    char line[1024];
    unsigned nlines = 0, nok = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *enc = strstr(line, "; encoding: [");
        if (!enc || line[0] == ';') continue;
        *enc = 0;
        char text[1024];
        memcpy(text, line, sizeof text);
        squeeze(text);
        uint32_t w[3] = {0, 0, 0};
        unsigned nb = 0;
        for (char *p = enc + 13; *p && *p != ']' && nb < 12;) {
            unsigned long v = strtoul(p, &p, 16);
            w[nb / 4] |= (uint32_t)(v & 0xff) << (8 * (nb % 4));
            nb++;
            if (*p == ',') p++;
        }
        if (nb == 0 || nb % 4) {
            fprintf(stderr, "gcn3-isa-coverage: %s:%u: bad encoding\n", argv[1], lineno);
            fclose(f);
            return 1;
        }
        gcn_insn in;
        gcn_decode_one(w, nb / 4, 0, &in);
        char ours[1024];
        gcn_disasm(&in, ours, sizeof ours);
        squeeze(ours);
        char mn[96];
        sscanf(text, "%95s", mn);
        unsigned op = (in.flags & GCN_IF_INVALID) ? lookup(mn) : in.op;
        int form = (in.mods & GCN_M_SDWA) ? F_SDWA : (in.mods & GCN_M_DPP) ? F_DPP : (in.mods & GCN_M_E64) ? F_E64 : F_NATIVE;
        if (in.flags & GCN_IF_INVALID) {
            size_t l = strlen(mn);
            form = l > 5 && !strcmp(mn + l - 5, "_sdwa") ? F_SDWA : l > 4 && !strcmp(mn + l - 4, "_dpp") ? F_DPP
                 : l > 4 && !strcmp(mn + l - 4, "_e64") ? F_E64 : F_NATIVE;
        }
        int ok = !(in.flags & GCN_IF_INVALID) && (unsigned)in.size == nb && !strcmp(ours, text);
        nlines++;
        nok += ok;
        if (op) {
            c[op].n[form]++;
            c[op].ok[form] += ok;
        }
    }
    fclose(f);

    /* decode check: each op's pattern decodes to it */
    size_t np = gcn_dec_patterns(NULL, 0);
    gcn_dec_pattern *pat = calloc(np ? np : 1, sizeof *pat);
    if (!pat) return 1;
    gcn_dec_patterns(pat, np);
    static unsigned char dec_ok[GCN_OP_COUNT];
    for (size_t i = 0; i < np; i++) {
        uint32_t w[3] = {pat[i].match, 0, 0};
        gcn_insn in;
        gcn_decode_one(w, 3, 0, &in);
        if (in.op == pat[i].op && !(in.flags & GCN_IF_INVALID)) dec_ok[pat[i].op] |= 1;
        else dec_ok[pat[i].op] |= 2;
    }
    free(pat);

    unsigned n_ops = GCN_OP_COUNT - 1, n_dec = 0, n_dis = 0, n_dis_any = 0, n_exec = 0;
    unsigned n_sdwa = 0, n_sdwa_ok = 0, n_sdwa_exec = 0, n_dpp = 0, n_dpp_ok = 0, n_dpp_exec = 0;
    for (unsigned op = 1; op < GCN_OP_COUNT; op++) {
        const cnt *k = &c[op];
        unsigned n = k->n[F_NATIVE] + k->n[F_E64], ok = k->ok[F_NATIVE] + k->ok[F_E64];
        n_dec += dec_ok[op] == 1;
        n_dis_any += n > 0;
        n_dis += n > 0 && ok == n;
        n_exec += gcn_sem_refusal(op) == NULL;
        const gcn_op_info *oi = &gcn_op_infos[op];
        int exec32 = !gcn_sem_refusal(op) && oi->sw[0] <= 1 && oi->sw[1] <= 1 && (oi->fmt == GCN_FMT_VOPC || oi->dw <= 1);
        if (k->n[F_SDWA]) { n_sdwa++; n_sdwa_ok += k->ok[F_SDWA] == k->n[F_SDWA]; n_sdwa_exec += exec32; }
        if (k->n[F_DPP]) { n_dpp++; n_dpp_ok += k->ok[F_DPP] == k->n[F_DPP]; n_dpp_exec += exec32; }
    }

    printf("# gfx803 (GCN3) ISA coverage\n\n");
    printf("Generated by `gcn3-isa-coverage tests/isa/gfx803-corpus.s` from the instruction table\n");
    printf("`gcn/gcn3.def` (do not edit; `tests/e2e/objdump-diff.sh` checks it is current).\n\n");
    printf("- **decode**: the op's (mask, match) pattern decodes to it.\n");
    printf("- **disassemble**: corpus lines (`tests/isa/gfx803-corpus.s`, LLVM 14's own disassembly of\n");
    printf("  each encoding, operand variants included) whose `gcn_disasm` text equals LLVM's.\n");
    printf("- **execute**: the emulator has semantics for the op (`gcn_sem_handlers[op]`); `refused:`\n");
    printf("  ops stop the wavefront with a message naming the op and the reason (`gcn_sem_refusal`).\n");
    printf("- **SDWA / DPP**: forms LLVM has for the op; agreement of their disassembly, and `exec`\n");
    printf("  when the plain handler exists and the operands are 32-bit (`gcn_sem_dpp.c`).\n\n");
    printf("## Counts\n\n");
    printf("| | ops |\n|---|---|\n");
    printf("| gfx803 opcodes in the table | %u |\n", n_ops);
    printf("| decode | %u |\n", n_dec);
    printf("| disassemble: all corpus lines equal LLVM's | %u of %u with corpus lines |\n", n_dis, n_dis_any);
    printf("| execute | %u |\n", n_exec);
    printf("| SDWA forms: disassemble / execute | %u / %u of %u |\n", n_sdwa_ok, n_sdwa_exec, n_sdwa);
    printf("| DPP forms: disassemble / execute | %u / %u of %u |\n", n_dpp_ok, n_dpp_exec, n_dpp);
    printf("| corpus lines equal to LLVM's | %u of %u |\n\n", nok, nlines);
    printf("## Opcodes\n\n");
    printf("| op | format | opcode | decode | disassemble | execute | SDWA | DPP |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (unsigned op = 1; op < GCN_OP_COUNT; op++) {
        const gcn_op_info *oi = &gcn_op_infos[op];
        const cnt *k = &c[op];
        unsigned n = k->n[F_NATIVE] + k->n[F_E64], ok = k->ok[F_NATIVE] + k->ok[F_E64];
        char dis[32], sd[32], dp[32];
        if (n) snprintf(dis, sizeof dis, "%s %u/%u", ok == n ? "yes" : "**no**", ok, n);
        else snprintf(dis, sizeof dis, "-");
        int exec32 = !gcn_sem_refusal(op) && oi->sw[0] <= 1 && oi->sw[1] <= 1 && (oi->fmt == GCN_FMT_VOPC || oi->dw <= 1);
        if (k->n[F_SDWA]) snprintf(sd, sizeof sd, "%u/%u%s", k->ok[F_SDWA], k->n[F_SDWA], exec32 ? " exec" : "");
        else snprintf(sd, sizeof sd, "-");
        if (k->n[F_DPP]) snprintf(dp, sizeof dp, "%u/%u%s", k->ok[F_DPP], k->n[F_DPP], exec32 ? " exec" : "");
        else snprintf(dp, sizeof dp, "-");
        char opc[16];
        if (oi->fmt == GCN_FMT_EXP) snprintf(opc, sizeof opc, "-");
        else snprintf(opc, sizeof opc, "0x%03x", oi->opc);
        char ex[48];
        const char *why = gcn_sem_refusal(op);
        if (why) snprintf(ex, sizeof ex, "refused: %s", why);
        else snprintf(ex, sizeof ex, "yes");
        printf("| %s | %s%s | %s | %s | %s | %s | %s | %s |\n", oi->name, fmt_name(oi->fmt),
               (oi->attr & GCN_A_E64) ? "+VOP3" : "", opc, dec_ok[op] == 1 ? "yes" : "**no**", dis,
               ex, sd, dp);
    }
    return 0;
}
