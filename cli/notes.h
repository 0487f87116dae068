/* The notes under a command's table, said once: printed into memory, then
 * written to the terminal as they are and kept for the page (--html), which
 * shows them under its table (plots/html_page.h splits them into items).
 *
 *   struct notes n = {0};
 *   notes_begin(&n);
 *   table_notes_print(n.f, ...);   // anything printed on n.f
 *   notes_end(&n);                  // now on stdout; n.text holds it too
 *   ... notes_begin/notes_end again: n.text gathers every part ...
 *   notes_release(&n);
 */
#ifndef STRATA_CLI_NOTES_H
#define STRATA_CLI_NOTES_H

#include <stdbool.h>
#include <stdio.h>

struct notes {
    FILE *f;          /* between notes_begin and notes_end, where the notes go */
    char *text;       /* every part said so far; NULL: none yet, or lost */
    size_t len;
    bool is_lost;     /* memory ran out: the terminal has the notes, the page not */
    char *part;       /* the part being printed (open_memstream's) */
    size_t part_len;
};

/* f: memory, or stdout when none can be had (the page then lacks them). */
void notes_begin(struct notes *n);

/* The part printed since notes_begin, to stdout and to n->text. */
void notes_end(struct notes *n);

/* notes_end, the page's text given apart: page (NULL: the part as printed)
 * goes to n->text in the part's place, for a part whose lines the page's
 * splitter (html_note_items) would part otherwise than the reader does,
 * such as an indented list or a paragraph wrapped at column 0. */
void notes_end_page(struct notes *n, const char *page);

void notes_release(struct notes *n);

#endif
