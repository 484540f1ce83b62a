import type postgres from 'postgres';

/**
 * Migrations whose comments were reworded after they shipped, so that databases migrated with the
 * earlier texts keep migrating.
 *
 * postgrator stores an MD5 of each applied file's whole text, comments included, and refuses to
 * start ("MD5 checksum failed for migration [N]") when a file no longer matches it; databases
 * already deployed, and the ones developers keep in `.data/`, hold the checksums of the texts they
 * were migrated with. Rewording a comment changes nothing Postgres runs, so each row below records
 * a migration's version, its file's checksum now, the checksum of one earlier text of it, and a
 * commit that holds that text. test/database/reworded-migrations.test.ts reads each earlier text
 * from git and proves it equal to today's once `--` comments are set aside (strings, quoted names
 * and function bodies compared byte for byte), and that every earlier text equal in that way is
 * listed: a row can never vouch for a changed statement. An earlier text that changed a statement
 * (016 and 018 each had one while they were being written) has no row, and a database holding its
 * checksum is refused as before.
 *
 * Rewording a migration's comments again: add a row for the text it has now and set the checksum
 * now of its rows to the new text's; the test prints the rows to write.
 */
export const REWORDED_MIGRATIONS: readonly (readonly [
  version: number,
  md5: string,
  earlierMd5: string,
  earlierCommit: string,
])[] = [
  [1, 'abcf7a069e9346211a4b52a685348590', '6e80ab4e2b37615ec98a067958438aa0', '23957894a603'],
  [3, '8986d80d1672c2b6bbc1b272441554c7', '035a19cd001cab6a990b1c9128f9097f', '56e564b279e2'],
  [4, 'eb31c0f9257ab447d7b8e227bb39731a', '6b14877a9b9d9b5b4981d4876f44f246', 'b9a083752633'],
  [5, 'a36803ce4a83d46fbcbcda6d1a4fb993', '67eb8ae85a661a37e1afa79632b0101b', '58894890eb4f'],
  [6, 'a8371573506cd555db51724d21018c87', '868c46bcd94e448df776cf375ffb3957', '58894890eb4f'],
  [7, '1803d334b9b611142e5a717054258ae4', '90dee06f24a2f524e68b06336ee639dd', '58894890eb4f'],
  [9, 'dfed6254745c066b01f44b4b84267933', 'ed7db27c512943d9c8395af545844e7a', '6afa993b3fda'],
  [10, 'a7b0d1202d180d0b633dc4046f4f955b', 'b4b71f8f70b5e907afd1c70aeaf881d1', '51e4e43cbea8'],
  [11, 'c18ce2f92e6afddd0f492671e95f6d82', 'c8ef9fd92c920a9b34a9e69ff40a77b8', '39fce8b70b29'],
  [12, '926dca34b62ac5a1fef42b7b15e2eb12', '3804d24b61b4cdf835b328473d882c80', '10cf9727432e'],
  [13, '0c34850b8feaedca6fd8a64b5d169a3c', '0fa45fed6c7fc8c84fde4e3d0a307230', '184d1df77b10'],
  [14, '9d2f6fd8f487582eb7eeae17aede7b31', 'e3fbdcf900d191df245d14032595c77f', '0587516c8a0b'],
  [15, 'e3a0293eb1bb30beac9e6dce4811e3ea', 'e95119733b72365c63a031cd90262296', 'ba404e8c6674'],
  [16, '23395e5f740a2271764521388dda91b1', 'b21529aa16871894207677a9d7ac30fe', 'f8d300ee877e'],
  [17, '0920e10b12a6b8d736e774893636bc7b', 'd2bf00cafea29791d39085b989b917f4', '90314aba1bb8'],
  [18, '452ba241d9130452ef5d9eb1d0d22535', 'e6057390fff92406f3f70b5f24ff25dd', '36e5d9906cd6'],
  [19, 'a1d443098d7db719f6cac356908fa01b', '0034471373325f88011279415595778c', 'c4b344066d08'],
  [20, '8f712ea3a21a9ecc750ed8328eb9ae70', '7c5f48cd4717440a8ad1aac5aece1227', 'efba8054759b'],
  [21, '8f46abae07a423718b0b93c67750939b', '2156c5c6455c4184c6f461716a7e3e0f', 'e9c1b21c3b85'],
  [22, '96719ebe2148a28da009c7f85a1c23f8', 'f0f8444594cef5a4ba5c3844bbf8f984', 'abf11f7fb5bb'],
  [23, 'c1f444f011b93e17a6d3769cc6a33f7b', '0f976b748d9770d616317151bc944ae7', '461b06e7c606'],
  [24, 'c7c2e9627e0cc623210508b90563f389', '9a7f858e791b7f8632c68c11ef9a37fd', 'ddfee2379c1a'],
  [26, '412dd1016352a4781c191783c43acc58', 'd60069da1cb043b0f0099c522abe8ca0', '58401169f6e8'],
];

/**
 * Before postgrator validates, sets the stored checksum of each migration listed above to its
 * file's checksum, only where the stored one is one of its recorded earlier checksums. Any other
 * stored checksum is left for postgrator to judge, so an unknown one is still refused, and a file
 * whose text is not the one its rows were checked against gets nothing rewritten. One statement,
 * so all or none; the caller holds the migration lock.
 *
 * `migrations` are postgrator's own: each file's version and the checksum postgrator computed of
 * it. Returns the versions whose stored checksum was rewritten.
 */
export async function acceptRewordedMigrations(
  connection: postgres.Sql,
  schemaTable: string,
  migrations: readonly { version: number; md5?: string | undefined }[],
): Promise<number[]> {
  const fileMd5 = new Map(migrations.map((migration) => [migration.version, migration.md5]));
  const accepted = REWORDED_MIGRATIONS.filter(([version, md5]) => fileMd5.get(version) === md5).map(
    ([version, md5, earlier]) => ({ version, md5, earlier }),
  );
  if (accepted.length === 0) return [];
  // A database never migrated has no table yet: postgrator creates it.
  const [table] = await connection<{ name: string | null }[]>`
    select to_regclass(${schemaTable})::text as name`;
  if (!table?.name) return [];
  const rewritten = await connection<{ version: string }[]>`
    update ${connection(schemaTable)} as applied set md5 = accepted.md5
    from jsonb_to_recordset(${connection.json(accepted)})
      as accepted(version bigint, md5 text, earlier text)
    where applied.version = accepted.version and applied.md5 = accepted.earlier
    returning applied.version::text`;
  return rewritten.map((row) => Number(row.version)).sort((a, b) => a - b);
}
