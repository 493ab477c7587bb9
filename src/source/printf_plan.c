// SPDX-License-Identifier: MIT
/*
 * printf_plan.c - which arguments a printf format consumes and how the
 * kernel's vbin_printf() stores each, so that a tb_printf() record holds
 * exactly what the kernel's bstr_printf() and libtraceevent read back.
 *
 * The kernel's rules (lib/vsprintf.c, format_decode): after '%', flags
 * "-+ #0", a width (digits, or '*': an int argument), a precision ('.'
 * then digits or '*': an int argument), a qualifier (hh h l ll L z Z t)
 * and the conversion.  %c stores one byte; %s the string and its NUL; %p
 * the pointer, eight bytes, when followed by S s F f x K or no letter (the
 * other %p extensions read the pointed-to memory at the call and store
 * text: nothing user space can give a reader); d i o u x X by qualifier:
 * hh one byte, h two, none four, l ll L z Z t eight.  Anything else (%n,
 * %f, %j...) is invalid to the kernel, which stops reading the format
 * there; we refuse the format instead.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "registry.h"

/* The class of an integer conversion with qualifier q ('H' is hh, 'L' is ll). */
static char integer_class(char q)
{
	switch (q) {
	case 'H':
		return 'c';
	case 'h':
		return 'h';
	case 'l':
	case 'L':
	case 'z':
	case 'Z':
	case 't':
		return 'l';
	default:
		return 'i';
	}
}

static const char *skip_digits(const char *p)
{
	while (isdigit((unsigned char)*p))
		p++;
	return p;
}

/* Read the qualifier at *p (advancing it): 0, 'h', 'H', 'l', 'L', 'z', 'Z' or 't'. */
static char qualifier(const char **p)
{
	char q = **p;

	if (q != 'h' && q != 'l' && q != 'L' && q != 'z' && q != 'Z' && q != 't')
		return 0;
	(*p)++;
	if (q == 'h' && **p == 'h') {
		(*p)++;
		return 'H';
	}
	if (q == 'l' && **p == 'l') {
		(*p)++;
		return 'L';
	}
	return q;
}

static int add(char *plan, size_t max, int *n, char cls)
{
	if ((size_t)*n >= max)
		return -E2BIG;
	plan[(*n)++] = cls;
	return 0;
}

int printf_plan(const char *fmt, char *plan, size_t max, const char **bad)
{
	const char *p = fmt;
	int n = 0, rc = 0;

	while ((p = strchr(p, '%')) != NULL) {
		const char *spec = p++;
		char q;

		p += strspn(p, "-+ #0");
		if (*p == '*') {
			rc = add(plan, max, &n, 'i');
			p++;
		} else {
			p = skip_digits(p);
		}
		if (rc == 0 && *p == '.') {
			p++;
			if (*p == '*') {
				rc = add(plan, max, &n, 'i');
				p++;
			} else {
				p = skip_digits(p);
			}
		}
		if (rc < 0)
			return rc;
		q = qualifier(&p);
		switch (*p) {
		case '%':
			p++;
			continue;
		case 'c':
			rc = add(plan, max, &n, 'c');
			break;
		case 's':
			rc = add(plan, max, &n, 's');
			break;
		case 'p':
			if (isalnum((unsigned char)p[1]) && !strchr("SsFfxK", p[1])) {
				*bad = spec;
				return -EINVAL;
			}
			rc = add(plan, max, &n, 'p');
			while (isalnum((unsigned char)p[1]))
				p++;
			break;
		case 'd':
		case 'i':
		case 'o':
		case 'u':
		case 'x':
		case 'X':
			rc = add(plan, max, &n, integer_class(q));
			break;
		default:
			*bad = spec;
			return -EINVAL;
		}
		if (rc < 0)
			return rc;
		p++;
	}
	return n;
}

/*
 * The inline packing stores 4-byte arguments ('i') as four bytes, 8-byte
 * integers and pointers ('l', 'p') as eight, strings ('s') whole: right
 * wherever the plan wants exactly that.
 */
int printf_plan_matches(const char *plan, int nplan, const char *cls, int n)
{
	if (nplan != n)
		return 0;
	for (int i = 0; i < n; i++) {
		char want = plan[i], have = cls[i];
		int same = want == 'i' ? have == 'i'
			 : want == 's' ? have == 's'
			 : (want == 'l' || want == 'p') ? (have == 'l' || have == 'p')
			 : 0;
		if (!same)
			return 0;
	}
	return 1;
}
