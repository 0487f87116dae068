/* core/text_append: pieces appended in order, and a cut that keeps the
 * buffer terminated and the length true. */
#include <criterion/criterion.h>
#include <string.h>

#include "../core/text_append.h"

Test(text_append, pieces_follow_each_other)
{
    char buf[32];
    size_t used = 0;
    buf[0] = '\0';
    text_appendf(buf, sizeof buf, &used, "%d host%s:", 2, "s");
    text_appendf(buf, sizeof buf, &used, " %s", "a");
    cr_assert_str_eq(buf, "2 hosts: a");
    cr_assert_eq(used, strlen(buf));
}

/* 8 bytes hold 7 characters: "abcdefgh" is cut to "abcdefg", used stops at
 * 7, and what comes after adds nothing (not even past the end). */
Test(text_append, a_cut_stops_at_the_last_byte_and_later_pieces_add_nothing)
{
    char buf[9] = "xxxxxxxxZ";
    size_t used = 0;
    text_appendf(buf, 8, &used, "%s", "abcdefgh");
    cr_assert_str_eq(buf, "abcdefg");
    cr_assert_eq(used, 7);
    text_appendf(buf, 8, &used, "%s", "more");
    cr_assert_str_eq(buf, "abcdefg");
    cr_assert_eq(used, 7);
    cr_assert_eq(buf[8], 'Z', "nothing written past size");
}

Test(text_append, an_empty_buffer_is_left_alone)
{
    char buf[1] = {'Q'};
    size_t used = 0;
    text_appendf(buf, 0, &used, "%s", "x");
    cr_assert_eq(buf[0], 'Q');
    cr_assert_eq(used, 0);
}
