/*-------------------------------------------------------------------------
 *
 * keys/keycodec_internal.h
 *	  What the encoder (keys/keycodec.c) and the decoder
 *	  (keys/keycodec_decode.c) share and nothing else sees: the bytes of
 *	  the string encoding.  On-disk format: never to change.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_KEYCODEC_INTERNAL_H
#define FORST_KEYCODEC_INTERNAL_H

/* String encoding: escape of 0x00, and terminator. */
#define KEY_STR_ESC			0x00
#define KEY_STR_ESC_NUL		0xFF
#define KEY_STR_END			0x01

#endif							/* FORST_KEYCODEC_INTERNAL_H */
