/* forst--1.3--1.4.sql: from 1.3 to 1.4 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.4'" to load this file. \quit

-- ---------------------------------------------------------------------
-- numeric key columns: the operator class of the primary key (the
-- library of 1.4 encodes numeric keys; see src/am/keys/keycodec.c).
-- ---------------------------------------------------------------------
CREATE OPERATOR CLASS forst.numeric_ops DEFAULT FOR TYPE numeric USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 numeric_cmp(numeric, numeric);
