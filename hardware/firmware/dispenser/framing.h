/*
 * Line framing for the Gizmos dispenser board: "$<seq>,<TYPE>[,<field>...]*<CRC16>\n".
 *
 * Plain C99 with no Arduino dependencies so that the host test (../test_framing.c) compiles
 * this exact file with gcc and holds it to hardware/test_vectors.json, the same vectors the
 * Python parser (hardware/protocol.py) is checked against. See docs/hardware.md.
 *
 * Usage:
 *   framing_t f;
 *   framing_begin(&f, seq++, "ROW");
 *   framing_add_str(&f, "red");
 *   framing_add_uint(&f, r);  ...
 *   const char *line = framing_end(&f);   // NULL if the line would exceed FRAMING_MAX_LINE
 */
#ifndef GIZMOS_FRAMING_H
#define GIZMOS_FRAMING_H

#include <stddef.h>
#include <stdint.h>

/* Longest line, terminator excluded; must equal MAX_LINE in hardware/protocol.py. */
#define FRAMING_MAX_LINE 120

typedef struct {
    char buf[FRAMING_MAX_LINE + 2]; /* line + '\n' + NUL */
    size_t len;
    uint8_t overflow;
} framing_t;

/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF); "123456789" -> 0x29B1. Bitwise: no table,
 * because 512 bytes of RAM matter on an ATmega328 and a line is only ~40 bytes. */
static uint16_t framing_crc16(const char *data, size_t len) {
    uint16_t crc = 0xFFFF;
    size_t i;
    uint8_t bit;
    for (i = 0; i < len; i++) {
        crc ^= (uint16_t)((uint8_t)data[i]) << 8;
        for (bit = 0; bit < 8; bit++) {
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
        }
    }
    return crc;
}

static void framing_putc(framing_t *f, char c) {
    /* Room is kept for the "*XXXX" trailer so an overlong line is detected, never truncated. */
    if (f->len + 1 + 5 > FRAMING_MAX_LINE) {
        f->overflow = 1;
        return;
    }
    f->buf[f->len++] = c;
}

static void framing_puts(framing_t *f, const char *s) {
    while (*s) {
        framing_putc(f, *s++);
    }
}

static void framing_put_uint(framing_t *f, uint32_t v) {
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n) {
        framing_putc(f, digits[--n]);
    }
}

/* Start a line: "$<seq>,<type>". */
static void framing_begin(framing_t *f, uint16_t seq, const char *type) {
    f->len = 0;
    f->overflow = 0;
    framing_putc(f, '$');
    framing_put_uint(f, seq);
    framing_putc(f, ',');
    framing_puts(f, type);
}

/* Append ",<text>"; text must not contain ',', '$', '*' or control characters. */
static void framing_add_str(framing_t *f, const char *s) {
    framing_putc(f, ',');
    framing_puts(f, s);
}

/* Append ",<decimal>". */
static void framing_add_uint(framing_t *f, uint32_t v) {
    framing_putc(f, ',');
    framing_put_uint(f, v);
}

/* Append "*<CRC>\n" and return the finished NUL-terminated line, or NULL on overflow. */
static const char *framing_end(framing_t *f) {
    static const char hex[] = "0123456789ABCDEF";
    uint16_t crc;
    int shift;
    if (f->overflow) {
        return NULL;
    }
    crc = framing_crc16(f->buf + 1, f->len - 1); /* between '$' and '*' */
    f->buf[f->len++] = '*';
    for (shift = 12; shift >= 0; shift -= 4) {
        f->buf[f->len++] = hex[(crc >> shift) & 0xF];
    }
    f->buf[f->len++] = '\n';
    f->buf[f->len] = '\0';
    return f->buf;
}

#endif /* GIZMOS_FRAMING_H */
