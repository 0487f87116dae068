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

/* text[len] appended to n->text; on no memory the page loses its notes. */
static void append(struct notes *n, const char *text, size_t len)
{
    char *all = n->is_lost ? NULL : realloc(n->text, n->len + len + 1);
    if (all) {
        memcpy(all + n->len, text, len);
        all[n->len + len] = '\0';
        n->text = all;
        n->len += len;
    } else {
        n->is_lost = true;
        free(n->text);
        n->text = NULL;
    }
}

void notes_end_page(struct notes *n, const char *page)
{
    if (!n->f || n->f == stdout) return;
    fclose(n->f);
    n->f = stdout;
    if (!n->part) return;
    fputs(n->part, stdout);
    if (page) append(n, page, strlen(page));
    else append(n, n->part, n->part_len);
    free(n->part);
    n->part = NULL;
}

void notes_end(struct notes *n)
{
    notes_end_page(n, NULL);
}

void notes_release(struct notes *n)
{
    notes_end(n);
    free(n->text);
    *n = (struct notes){0};
}
