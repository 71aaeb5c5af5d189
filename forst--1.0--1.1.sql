/* forst--1.0--1.1.sql: from 1.0 to 1.1 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.1'" to load this file. \quit

-- CREATE EXTENSION forst installs 1.0 and then runs this script, so a new
-- installation and an updated one have the same objects (tested by
-- sql/forst_upgrade.sql).

-- ---------------------------------------------------------------------
-- Privileges (docs/security.md)
-- ---------------------------------------------------------------------

-- ---------------------------------------------------------------------
-- Dump and restore
-- ---------------------------------------------------------------------
