/* Notes printed once, for the terminal and the page (notes.h). */
#include <stdlib.h>
#include <string.h>

#include "notes.h"

void notes_begin(struct notes *n)
{
    n->part = NULL;
    n->part_len = 0;
    n->f = open_memstream(&n->part, &n->part_len);
    if (!n->f) {   /* said on the terminal alone */
        n->f = stdout;
        n->is_lost = true;
        free(n->text);
        n->text = NULL;
    }
}

void notes_end(struct notes *n)
{
    if (!n->f || n->f == stdout) return;
    fclose(n->f);
    n->f = stdout;
    if (!n->part) return;
    fputs(n->part, stdout);
    char *text = n->is_lost ? NULL : realloc(n->text, n->len + n->part_len + 1);
    if (text) {
        memcpy(text + n->len, n->part, n->part_len + 1);
        n->text = text;
        n->len += n->part_len;
    } else {
        n->is_lost = true;
        free(n->text);
        n->text = NULL;
    }
    free(n->part);
    n->part = NULL;
}

void notes_release(struct notes *n)
{
    notes_end(n);
    free(n->text);
    *n = (struct notes){0};
}
