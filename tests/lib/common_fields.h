/* SPDX-License-Identifier: MIT */
/*
 * common_fields.h - the four common field lines every kernel format file
 * starts its field list with, for tests that write a format of their own:
 *
 *   "name: x\nID: 900\nformat:\n" FORMAT_COMMON_FIELDS "\n\tfield:u64 seq;..."
 */
#ifndef TB_TEST_COMMON_FIELDS_H
#define TB_TEST_COMMON_FIELDS_H

#define FORMAT_COMMON_FIELDS                                                       \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"

#endif
