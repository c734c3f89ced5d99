/*
 * Host test for dispenser/framing.h, driven by tests/test_hardware_firmware.py.
 *
 * stdin: one vector per line, tab-separated: seq, TYPE, then the fields. Fields made only of
 * digits go through framing_add_uint (as the sketch sends numbers), others through
 * framing_add_str. stdout: the framed line for each vector, so the test can compare it with the
 * vector's "line". Before the vectors it prints "CHECK <crc of 123456789>" and "OVERFLOW <ok|bad>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispenser/framing.h"

static int all_digits(const char *s) {
    if (!*s) {
        return 0;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9') {
            return 0;
        }
    }
    return 1;
}

int main(void) {
    char input[512];
    framing_t f;
    int i;

    printf("CHECK %04X\n", (unsigned)framing_crc16("123456789", 9));

    framing_begin(&f, 1, "RET");
    for (i = 0; i < 60; i++) {
        framing_add_str(&f, "yellow");
    }
    printf("OVERFLOW %s\n", framing_end(&f) == NULL ? "ok" : "bad");

    while (fgets(input, sizeof input, stdin)) {
        char *saveptr = NULL;
        char *tok;
        unsigned long seq;
        input[strcspn(input, "\r\n")] = '\0';
        tok = strtok_r(input, "\t", &saveptr);
        if (!tok) {
            continue;
        }
        seq = strtoul(tok, NULL, 10);
        tok = strtok_r(NULL, "\t", &saveptr);
        if (!tok) {
            fprintf(stderr, "vector without a type\n");
            return 2;
        }
        framing_begin(&f, (uint16_t)seq, tok);
        while ((tok = strtok_r(NULL, "\t", &saveptr)) != NULL) {
            if (all_digits(tok)) {
                framing_add_uint(&f, (uint32_t)strtoul(tok, NULL, 10));
            } else {
                framing_add_str(&f, tok);
            }
        }
        {
            const char *line = framing_end(&f);
            fputs(line ? line : "OVERFLOW\n", stdout);
        }
    }
    return 0;
}
