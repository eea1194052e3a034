/* SPDX-License-Identifier: MIT */
/*
 * review_out.c - one writer for every view's table: text (aligned
 * columns, sizes for people), JSON (an array of objects, numbers as
 * numbers, absent as null) and CSV (RFC 4180, a header line).
 *
 * The cells' text was cleaned when the log was read (review_clean); CSV
 * quotes every text cell, and one that starts with = + - @ gets a leading
 * ' so that a spreadsheet opening the file does not run what a workload
 * named its process.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "quota.h"
#include "review.h"

#define TABLE_INITIAL_ROWS 64u
#define CELL_BUF 64
#define PERCENT 100.0
#define COLUMN_GAP 2
#define JSON_INDENT "  "   /* json-c's pretty indent: a row is a member of the array */

int review_table_init(struct review_table *t, const char *const *columns, unsigned n)
{
	memset(t, 0, sizeof(*t));
	t->columns = columns;
	t->n_columns = n;
	return 0;
}

struct review_cell *review_table_row(struct review_table *t)
{
	struct review_cell *row;

	if (t->rows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : TABLE_INITIAL_ROWS;
		struct review_cell *c = realloc(t->cells, cap * t->n_columns * sizeof(*c));
		if (!c)
			return NULL;
		t->cells = c;
		t->cap = cap;
	}
	row = &t->cells[t->rows++ * t->n_columns];
	memset(row, 0, t->n_columns * sizeof(*row));
	return row;
}

void review_cell_text(struct review_cell *c, const char *s)
{
	c->text = strdup(s ? s : "");
	c->type = c->text ? CELL_TEXT : CELL_NULL;
	c->owned = c->text != NULL;
}

void review_cell_ref(struct review_cell *c, const char *s)
{
	c->text = (char *)(s ? s : "");   /* never written: owned is false */
	c->type = CELL_TEXT;
	c->owned = false;
}

void review_cell_int(struct review_cell *c, int64_t v)
{
	c->type = CELL_INT;
	c->i = v;
}

void review_cell_count(struct review_cell *c, uint64_t v)
{
	review_cell_int(c, v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

void review_cell_bytes(struct review_cell *c, uint64_t v)
{
	if (v == REVIEW_UNSET || v > INT64_MAX)
		return;
	c->type = CELL_BYTES;
	c->i = (int64_t)v;
}

void review_cell_ratio(struct review_cell *c, double v)
{
	if (!(v >= 0))
		return;
	c->type = CELL_RATIO;
	c->ratio = v;
}

void review_table_free(struct review_table *t)
{
	for (size_t i = 0; i < t->rows * t->n_columns; i++)
		if (t->cells[i].owned)
			free(t->cells[i].text);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* A cell as text for people (sizes with units) or for machines. */
static const char *cell_text(const struct review_cell *c, bool people, char *buf, size_t len)
{
	switch (c->type) {
	case CELL_TEXT:
		return c->text;
	case CELL_INT:
		snprintf(buf, len, "%" PRId64, c->i);
		return buf;
	case CELL_BYTES:
		if (people)
			return gs_format_size((uint64_t)c->i, buf, len);
		snprintf(buf, len, "%" PRId64, c->i);
		return buf;
	case CELL_RATIO:
		if (people)
			snprintf(buf, len, "%.1f%%", c->ratio * PERCENT);
		else
			snprintf(buf, len, "%.4f", c->ratio);
		return buf;
	case CELL_NULL:
		break;
	}
	return people ? "-" : "";
}

/* Display width of cleaned UTF-8 text: one column per character. */
static size_t width_of(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Frees what a row's cells own, and empties them. */
static void row_clear(struct review_cell *row, unsigned n)
{
	for (unsigned c = 0; c < n; c++)
		if (row[c].owned)
			free(row[c].text);
	memset(row, 0, n * sizeof(*row));
}

/* The number of cells to print: no blanks after a row's last cell with
 * text. */
static unsigned row_end(const struct review_cell *row, unsigned n)
{
	unsigned end = n;

	while (end > 1 && row[end - 1].type == CELL_NULL)
		end--;
	while (end > 1 && row[end - 1].type == CELL_TEXT && !row[end - 1].text[0])
		end--;
	return end;
}

/* Text: every row is filled twice, once for the columns' widths and
 * once to print, so that no row is held (issue #32: a timeline of a
 * 1 GB log held 3 GB). */
static int write_text(const struct review_rows *rs, struct review_cell *row, FILE *out)
{
	size_t *width = calloc(rs->n_columns, sizeof(*width));
	char buf[CELL_BUF];
	int rc = 0;

	if (!width)
		return -1;
	for (unsigned c = 0; c < rs->n_columns; c++)
		width[c] = strlen(rs->columns[c]);
	for (size_t r = 0; r < rs->n_rows && rc == 0; r++) {
		rc = rs->fill(rs->ctx, r, row);
		for (unsigned c = 0; c < rs->n_columns && rc == 0; c++) {
			size_t w = width_of(cell_text(&row[c], true, buf, sizeof(buf)));
			width[c] = w > width[c] ? w : width[c];
		}
		row_clear(row, rs->n_columns);
	}
	for (size_t r = 0; r <= rs->n_rows && rc == 0; r++) {
		unsigned end = rs->n_columns;
		if (r && (rc = rs->fill(rs->ctx, r - 1, row)) < 0)
			break;
		if (r)
			end = row_end(row, rs->n_columns);
		for (unsigned c = 0; c < end; c++) {
			const char *s = r ? cell_text(&row[c], true, buf, sizeof(buf)) : rs->columns[c];
			bool last = c + 1 == end;
			fprintf(out, "%s%*s", s, last ? 0 : (int)(width[c] - width_of(s) + COLUMN_GAP), "");
		}
		fputc('\n', out);
		row_clear(row, rs->n_columns);
	}
	free(width);
	return rc;
}

static json_object *cell_json(const struct review_cell *c)
{
	char buf[CELL_BUF];

	switch (c->type) {
	case CELL_TEXT:
		return json_object_new_string(c->text);
	case CELL_INT:
	case CELL_BYTES:
		return json_object_new_int64(c->i);
	case CELL_RATIO:
		snprintf(buf, sizeof(buf), "%.4f", c->ratio);
		return json_object_new_double_s(c->ratio, buf);
	case CELL_NULL:
		break;
	}
	return NULL;
}

/* One row as a pretty JSON object, each of its lines indented as a member
 * of the array (json-c's own layout of a whole array, written a row at a
 * time; its strings hold no raw line break). */
static int json_row(const struct review_rows *rs, const struct review_cell *row, FILE *out)
{
	json_object *o = json_object_new_object();
	const char *text;

	if (!o)
		return -1;
	for (unsigned c = 0; c < rs->n_columns; c++)
		json_object_object_add(o, rs->columns[c], cell_json(&row[c]));
	text = json_object_to_json_string_ext(o, GS_AUDIT_JSON_FLAGS | JSON_C_TO_STRING_PRETTY);
	fputs(JSON_INDENT, out);
	for (; text && *text; text++) {
		fputc(*text, out);
		if (*text == '\n')
			fputs(JSON_INDENT, out);
	}
	json_object_put(o);
	return text ? 0 : -1;
}

static int write_json(const struct review_rows *rs, struct review_cell *row, FILE *out)
{
	int rc = 0;

	fputs("[\n", out);
	for (size_t r = 0; r < rs->n_rows && rc == 0; r++) {
		if ((rc = rs->fill(rs->ctx, r, row)) == 0)
			rc = json_row(rs, row, out);
		fputs(r + 1 < rs->n_rows ? ",\n" : "\n", out);
		row_clear(row, rs->n_columns);
	}
	fputs("]\n", out);
	return rc;
}

static void csv_field(FILE *out, const struct review_cell *c)
{
	char buf[CELL_BUF];
	const char *s = cell_text(c, false, buf, sizeof(buf));

	if (c->type != CELL_TEXT) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	if (strchr("=+-@", s[0]) && s[0])
		fputc('\'', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static int write_csv(const struct review_rows *rs, struct review_cell *row, FILE *out)
{
	int rc = 0;

	for (unsigned c = 0; c < rs->n_columns; c++)
		fprintf(out, "%s%s", c ? "," : "", rs->columns[c]);
	fputc('\n', out);
	for (size_t r = 0; r < rs->n_rows && rc == 0; r++) {
		if ((rc = rs->fill(rs->ctx, r, row)) < 0)
			break;
		for (unsigned c = 0; c < rs->n_columns; c++) {
			if (c)
				fputc(',', out);
			csv_field(out, &row[c]);
		}
		fputc('\n', out);
		row_clear(row, rs->n_columns);
	}
	return rc;
}

int review_rows_write(const struct review_rows *rs, enum review_format fmt, FILE *out)
{
	struct review_cell *row = calloc(rs->n_columns, sizeof(*row));
	int rc;

	if (!row)
		return -1;
	rc = fmt == REVIEW_JSON ? write_json(rs, row, out)
	   : fmt == REVIEW_CSV  ? write_csv(rs, row, out)
	                        : write_text(rs, row, out);
	row_clear(row, rs->n_columns);
	free(row);
	return rc < 0 || ferror(out) ? -1 : 0;
}

/* A built table as a row source: its rows' cells, copied borrowed. */
static int table_fill(void *ctx, size_t r, struct review_cell *row)
{
	const struct review_table *t = ctx;

	memcpy(row, &t->cells[r * t->n_columns], t->n_columns * sizeof(*row));
	for (unsigned c = 0; c < t->n_columns; c++)
		row[c].owned = false;   /* the table frees them */
	return 0;
}

int review_table_write(const struct review_table *t, enum review_format fmt, FILE *out)
{
	struct review_rows rs = { .columns = t->columns, .n_columns = t->n_columns, .n_rows = t->rows,
	                          .fill = table_fill, .ctx = (void *)t };

	return review_rows_write(&rs, fmt, out);
}
